#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        cin >> values[i];
    }
    int swaps = 0;
    int passes = 0;
    bool swapped = true;
    while (swapped) {
        swapped = false;
        passes += 1;
        for (int i = 0; i < n - passes; ++i) {
            if (values[i] > values[i + 1]) {
                swap(values[i], values[i + 1]);
                swaps += 1;
                swapped = true;
            }
        }
    }
    cout << passes << " " << swaps << "\n";
    for (int i = 0; i < n; ++i) {
        cout << values[i] << (i + 1 < n ? " " : "\n");
    }
    return 0;
}

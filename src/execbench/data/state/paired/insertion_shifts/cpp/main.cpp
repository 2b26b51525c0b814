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
    long long shifts = 0;
    for (int i = 1; i < n; ++i) {
        int key = values[i];
        int j = i - 1;
        while (j >= 0 && values[j] > key) {
            values[j + 1] = values[j];
            j -= 1;
            shifts += 1;
        }
        values[j + 1] = key;
    }
    cout << shifts << " " << values[0] << " " << values[n / 2] << " " << values[n - 1] << "\n";
    return 0;
}

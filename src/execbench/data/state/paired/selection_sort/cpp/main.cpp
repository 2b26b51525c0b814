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
    int moves = 0;
    long long comparisons = 0;
    for (int i = 0; i < n - 1; ++i) {
        int smallest = i;
        for (int j = i + 1; j < n; ++j) {
            comparisons += 1;
            if (values[j] < values[smallest]) {
                smallest = j;
            }
        }
        if (smallest != i) {
            swap(values[i], values[smallest]);
            moves += 1;
        }
    }
    cout << moves << " " << comparisons << "\n";
    for (int i = 0; i < n; ++i) {
        cout << values[i] << (i + 1 < n ? " " : "\n");
    }
    return 0;
}

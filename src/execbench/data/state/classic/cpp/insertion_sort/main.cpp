#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n);
    for (auto& v : values) cin >> v;
    long long shifts = 0;
    int i = 1, key = 0;
    for (i = 1; i < n; ++i) {
        key = values[i];
        int j = i - 1;
        while (j >= 0 && values[j] > key) {
            values[j + 1] = values[j];
            --j;
            ++shifts;
        }
        values[j + 1] = key;
    }
    cout << shifts << "\n";
    for (int t = 0; t < n; ++t) cout << values[t] << (t + 1 < n ? " " : "\n");
    return 0;
}

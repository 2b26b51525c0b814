#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    const int MOD = 1000;
    vector<int> row = {1};
    long long odd_total = 0;
    for (int r = 1; r <= n; ++r) {
        vector<int> nxt(r + 1, 1);
        for (int k = 1; k < r; ++k) {
            nxt[k] = (row[k - 1] + row[k]) % MOD;
        }
        row = nxt;
        for (int v : row) {
            if (v % 2 == 1) {
                odd_total += 1;
            }
        }
    }
    long long total = 0;
    for (int v : row) {
        total += v;
    }
    cout << odd_total << "\n";
    cout << total % MOD << " " << row[row.size() / 2] << "\n";
    return 0;
}

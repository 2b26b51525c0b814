#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<vector<int>> rows(n);
    for (int r = 0; r < n; ++r) {
        for (int k = 0; k <= r; ++k) {
            int x;
            cin >> x;
            rows[r].push_back(x % 100);
        }
    }
    vector<int> best = rows[n - 1];
    for (int r = n - 2; r >= 0; --r) {
        for (int k = 0; k <= r; ++k) {
            best[k] = rows[r][k] + max(best[k], best[k + 1]);
        }
    }
    cout << best[0] << "\n";
    return 0;
}

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>
using namespace std;

int main() {
    string a, b;
    cin >> a >> b;
    int m = a.size();
    int n = b.size();
    vector<int> prev(n + 1);
    for (int j = 0; j <= n; ++j) {
        prev[j] = j;
    }
    for (int i = 1; i <= m; ++i) {
        vector<int> cur(n + 1, 0);
        cur[0] = i;
        for (int j = 1; j <= n; ++j) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
        }
        prev = cur;
    }
    cout << prev[n] << "\n";
    return 0;
}

#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n, cap;
    cin >> n >> cap;
    vector<int> weight(n), value(n);
    for (int i = 0; i < n; ++i) cin >> weight[i] >> value[i];
    vector<long long> best(cap + 1, 0);
    int item = 0, taken = 0;
    for (item = 0; item < n; ++item) {
        bool improved = false;
        for (int c = cap; c >= weight[item]; --c) {
            if (best[c - weight[item]] + value[item] > best[c]) {
                best[c] = best[c - weight[item]] + value[item];
                improved = true;
            }
        }
        if (improved) ++taken;
    }
    cout << best[cap] << "\n";
    return 0;
}

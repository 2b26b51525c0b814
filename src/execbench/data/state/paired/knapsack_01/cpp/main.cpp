#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> weights(n), values(n);
    for (int k = 0; k < n; ++k) {
        cin >> weights[k] >> values[k];
    }
    int capacity = 10 * n;
    vector<long long> best(capacity + 1, 0);
    for (int k = 0; k < n; ++k) {
        int weight = weights[k];
        int value = values[k];
        for (int c = capacity; c >= weight; --c) {
            if (best[c - weight] + value > best[c]) {
                best[c] = best[c - weight] + value;
            }
        }
    }
    cout << best[capacity] << "\n";
    cout << best[capacity / 2] << "\n";
    return 0;
}

#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n), second(n);
    for (int k = 0; k < n; ++k) {
        int x, y;
        cin >> x >> y;
        values[k] = x % 100;
        second[k] = y;
    }
    vector<long long> prefix(n + 1, 0);
    for (int i = 0; i < n; ++i) {
        prefix[i + 1] = prefix[i] + values[i];
    }
    long long answer = 0;
    long long best = -1;
    for (int q = 0; q < n; ++q) {
        int a = second[q] % n;
        int b = (a + q) % n;
        int lo = min(a, b);
        int hi = max(a, b);
        long long s = prefix[hi + 1] - prefix[lo];
        answer = (answer * 13 + s) % 1000003;
        best = max(best, s);
    }
    cout << answer << " " << best << "\n";
    return 0;
}

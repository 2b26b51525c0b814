#include <algorithm>
#include <iostream>
using namespace std;

int main() {
    int n;
    cin >> n;
    int distinct_total = 0;
    long long largest = 0;
    for (int k = 0; k < n; ++k) {
        long long x;
        cin >> x;
        long long d = 2;
        int distinct = 0;
        while (d * d <= x) {
            if (x % d == 0) {
                distinct += 1;
                while (x % d == 0) {
                    x /= d;
                }
            }
            d += 1;
        }
        if (x > 1) {
            distinct += 1;
            largest = max(largest, x);
        }
        distinct_total += distinct;
    }
    cout << distinct_total << " " << largest << "\n";
    return 0;
}

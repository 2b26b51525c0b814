#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    long long total_steps = 0;
    vector<int> roots(10, 0);
    for (int k = 0; k < n; ++k) {
        long long x;
        cin >> x;
        x *= 7919;
        int steps = 0;
        while (x >= 10) {
            long long s = 0;
            while (x > 0) {
                s += x % 10;
                x /= 10;
            }
            x = s;
            steps += 1;
        }
        total_steps += steps;
        roots[x] += 1;
    }
    cout << total_steps << "\n";
    for (int d = 0; d < 10; ++d) {
        cout << roots[d] << (d < 9 ? " " : "\n");
    }
    return 0;
}

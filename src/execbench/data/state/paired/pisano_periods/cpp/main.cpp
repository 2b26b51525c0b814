#include <iostream>
using namespace std;

int main() {
    int limit;
    cin >> limit;
    int longest = 0;
    int longest_m = 0;
    long long total = 0;
    for (int m = 2; m <= limit; ++m) {
        int a = 0;
        int b = 1;
        int period = 0;
        while (true) {
            int next = (a + b) % m;
            a = b;
            b = next;
            period += 1;
            if (a == 0 && b == 1) {
                break;
            }
        }
        total += period;
        if (period > longest) {
            longest = period;
            longest_m = m;
        }
    }
    cout << longest_m << " " << longest << " " << total << "\n";
    return 0;
}

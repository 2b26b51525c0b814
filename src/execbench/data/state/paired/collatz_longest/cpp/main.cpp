#include <iostream>
using namespace std;

int main() {
    int limit;
    cin >> limit;
    int best_start = 1;
    int best_len = 1;
    long long total = 0;
    for (int start = 1; start <= limit; ++start) {
        long long n = start;
        int length = 1;
        while (n != 1) {
            if (n % 2 == 0) {
                n /= 2;
            } else {
                n = 3 * n + 1;
            }
            length += 1;
        }
        total += length;
        if (length > best_len) {
            best_len = length;
            best_start = start;
        }
    }
    cout << best_start << " " << best_len << " " << total << "\n";
    return 0;
}

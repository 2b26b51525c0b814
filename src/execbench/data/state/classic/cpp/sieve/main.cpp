#include <iostream>
#include <vector>
using namespace std;

int main() {
    int limit;
    cin >> limit;
    vector<bool> is_prime(limit + 1, true);
    is_prime[0] = is_prime[1] = false;
    int count = 0, last = -1;
    int p = 2;
    for (p = 2; p <= limit; ++p) {
        if (is_prime[p]) {
            ++count;
            last = p;
            for (long long q = 1LL * p * p; q <= limit; q += p) is_prime[q] = false;
        }
    }
    cout << count << " " << last << "\n";
    return 0;
}

#include <algorithm>
#include <iostream>
using namespace std;

int main() {
    int n;
    cin >> n;
    long long total_steps = 0;
    int longest = 0;
    long long checksum = 0;
    for (int k = 0; k < n; ++k) {
        long long a, b;
        cin >> a >> b;
        int steps = 0;
        while (b != 0) {
            long long r = a % b;
            a = b;
            b = r;
            steps += 1;
        }
        total_steps += steps;
        longest = max(longest, steps);
        checksum = (checksum * 31 + a) % 1000003;
    }
    cout << total_steps << " " << longest << " " << checksum << "\n";
    return 0;
}

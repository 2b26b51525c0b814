#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> histogram(32, 0);
    long long total = 0;
    for (int k = 0; k < n; ++k) {
        long long x;
        cin >> x;
        int bits = 0;
        while (x) {
            x &= x - 1;
            bits += 1;
        }
        histogram[bits] += 1;
        total += bits;
    }
    cout << total << "\n";
    for (int b = 0; b < 20; ++b) {
        cout << histogram[b] << (b < 19 ? " " : "\n");
    }
    return 0;
}

#include <iostream>
#include <map>
#include <string>
using namespace std;

int main() {
    int n;
    cin >> n;
    map<char, int> digit_counts;
    string longest = "";
    for (int k = 0; k < n; ++k) {
        long long x;
        cin >> x;
        string digits = "";
        while (x > 0) {
            digits = to_string(x % 7) + digits;
            x /= 7;
        }
        for (char d : digits) {
            digit_counts[d] += 1;
        }
        if (digits.size() > longest.size() || (digits.size() == longest.size() && digits > longest)) {
            longest = digits;
        }
    }
    for (const auto& entry : digit_counts) {
        cout << entry.first << " " << entry.second << "\n";
    }
    cout << longest << "\n";
    return 0;
}

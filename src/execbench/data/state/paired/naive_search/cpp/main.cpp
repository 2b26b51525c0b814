#include <iostream>
#include <string>
using namespace std;

int main() {
    string text;
    cin >> text;
    string pattern = "abab";
    int n = text.size();
    int m = pattern.size();
    int found = 0;
    long long checks = 0;
    int last = -1;
    for (int start = 0; start + m <= n; ++start) {
        int k = 0;
        while (k < m) {
            checks += 1;
            if (text[start + k] != pattern[k]) {
                break;
            }
            k += 1;
        }
        if (k == m) {
            found += 1;
            last = start;
        }
    }
    cout << found << " " << checks << " " << last << "\n";
    return 0;
}

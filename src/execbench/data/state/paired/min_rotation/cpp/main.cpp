#include <iostream>
#include <string>
using namespace std;

int main() {
    string text;
    cin >> text;
    int n = text.size();
    int best = 0;
    long long comparisons = 0;
    for (int start = 1; start < n; ++start) {
        int k = 0;
        while (k < n) {
            comparisons += 1;
            char a = text[(start + k) % n];
            char b = text[(best + k) % n];
            if (a != b) {
                if (a < b) {
                    best = start;
                }
                break;
            }
            k += 1;
        }
    }
    cout << best << " " << comparisons << "\n";
    cout << text.substr(best) + text.substr(0, best) << "\n";
    return 0;
}

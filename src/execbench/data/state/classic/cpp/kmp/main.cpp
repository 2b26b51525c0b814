#include <iostream>
#include <string>
#include <vector>
using namespace std;

int main() {
    string text, pattern;
    cin >> text >> pattern;
    int m = pattern.size();
    vector<int> fail(m, 0);
    int k = 0;
    for (int i = 1; i < m; ++i) {
        while (k > 0 && pattern[i] != pattern[k]) k = fail[k - 1];
        if (pattern[i] == pattern[k]) ++k;
        fail[i] = k;
    }
    int count = 0, last = 0;
    size_t i = 0;
    k = 0;
    for (i = 0; i < text.size(); ++i) {
        char ch = text[i];
        while (k > 0 && ch != pattern[k]) k = fail[k - 1];
        if (ch == pattern[k]) ++k;
        if (k == m) {
            ++count;
            last = i - k + 1;
            k = fail[k - 1];
        }
    }
    cout << count << " " << last << "\n";
    return 0;
}

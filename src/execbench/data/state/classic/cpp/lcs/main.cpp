#include <algorithm>
#include <iostream>
#include <string>
#include <vector>
using namespace std;

int main() {
    string a, b;
    cin >> a >> b;
    vector<int> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
    size_t i = 1;
    while (i <= a.size()) {
        for (size_t j = 1; j <= b.size(); ++j) {
            if (a[i - 1] == b[j - 1]) cur[j] = prev[j - 1] + 1;
            else cur[j] = max(prev[j], cur[j - 1]);
        }
        prev = cur;
        ++i;
    }
    cout << prev[b.size()] << "\n";
    return 0;
}

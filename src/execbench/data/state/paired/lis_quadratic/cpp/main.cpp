#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        cin >> values[i];
    }
    vector<int> length(n, 1);
    int best = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < i; ++j) {
            if (values[j] < values[i] && length[j] + 1 > length[i]) {
                length[i] = length[j] + 1;
            }
        }
        if (length[i] > best) {
            best = length[i];
        }
    }
    cout << best << "\n";
    for (int i = 0; i < n; ++i) {
        cout << length[i] << (i + 1 < n ? " " : "\n");
    }
    return 0;
}

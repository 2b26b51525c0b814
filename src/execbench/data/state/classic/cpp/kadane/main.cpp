#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<long long> values(n);
    for (auto& v : values) cin >> v;
    long long best = values[0], current = values[0];
    int start = 0, best_start = 0, best_end = 0;
    int i = 1;
    for (i = 1; i < n; ++i) {
        if (current + values[i] < values[i]) {
            current = values[i];
            start = i;
        } else {
            current += values[i];
        }
        if (current > best) {
            best = current;
            best_start = start;
            best_end = i;
        }
    }
    cout << best << " " << best_start << " " << best_end << "\n";
    return 0;
}

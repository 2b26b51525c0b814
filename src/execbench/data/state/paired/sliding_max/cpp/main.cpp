#include <deque>
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
    const int width = 5;
    deque<int> window;
    long long total = 0;
    int changes = 0;
    int last = -1;
    for (int i = 0; i < n; ++i) {
        while (!window.empty() && values[window.back()] <= values[i]) {
            window.pop_back();
        }
        window.push_back(i);
        if (window.front() <= i - width) {
            window.pop_front();
        }
        if (i >= width - 1) {
            int best = values[window.front()];
            total += best;
            if (best != last) {
                changes += 1;
            }
            last = best;
        }
    }
    cout << total << " " << changes << "\n";
    return 0;
}

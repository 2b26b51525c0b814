#include <functional>
#include <iostream>
#include <queue>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    priority_queue<int> low;
    priority_queue<int, vector<int>, greater<int>> high;
    long long total = 0;
    for (int k = 0; k < n; ++k) {
        int x;
        cin >> x;
        if (low.empty() || x <= low.top()) {
            low.push(x);
        } else {
            high.push(x);
        }
        if (low.size() > high.size() + 1) {
            high.push(low.top());
            low.pop();
        } else if (high.size() > low.size()) {
            low.push(high.top());
            high.pop();
        }
        int median = low.top();
        total += median;
    }
    cout << total << " " << low.top() << " " << low.size() << " " << high.size() << "\n";
    return 0;
}

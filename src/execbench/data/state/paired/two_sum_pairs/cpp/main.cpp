#include <iostream>
#include <map>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        cin >> values[i];
    }
    int target = 200;
    map<int, int> seen;
    long long pairs = 0;
    for (int v : values) {
        auto found = seen.find(target - v);
        if (found != seen.end()) {
            pairs += found->second;
        }
        seen[v] += 1;
    }
    cout << pairs << "\n";
    cout << seen.size() << "\n";
    return 0;
}

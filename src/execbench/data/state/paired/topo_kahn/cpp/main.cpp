#include <functional>
#include <iostream>
#include <queue>
#include <vector>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    vector<vector<int>> out(n);
    vector<int> indeg(n, 0);
    int k = 0, a = 0, b = 0, w = 0;
    for (k = 0; k < m; ++k) {
        cin >> a >> b >> w;
        out[a].push_back(b);
        indeg[b] += 1;
    }
    priority_queue<int, vector<int>, greater<int>> ready;
    for (int v = 0; v < n; ++v) {
        if (indeg[v] == 0) {
            ready.push(v);
        }
    }
    vector<int> order;
    while (!ready.empty()) {
        int u = ready.top();
        ready.pop();
        order.push_back(u);
        for (int v : out[u]) {
            indeg[v] -= 1;
            if (indeg[v] == 0) {
                ready.push(v);
            }
        }
    }
    long long checksum = 0;
    for (size_t position = 0; position < order.size(); ++position) {
        checksum = (checksum + (long long)position * order[position]) % 1000003;
    }
    cout << order.size() << " " << checksum << " " << order.back() << "\n";
    return 0;
}

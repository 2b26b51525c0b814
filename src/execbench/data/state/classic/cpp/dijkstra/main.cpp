#include <functional>
#include <iostream>
#include <queue>
#include <utility>
#include <vector>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    vector<vector<pair<int, long long>>> adj(n);
    for (int e = 0; e < m; ++e) {
        int u, v;
        long long w;
        cin >> u >> v >> w;
        adj[u].push_back({v, w});
        adj[v].push_back({u, w});
    }
    vector<long long> dist(n, -1);
    priority_queue<pair<long long, int>, vector<pair<long long, int>>, greater<>> heap;
    heap.push({0, 0});
    long long d = 0;
    int u = 0, settled = 0;
    while (!heap.empty()) {
        d = heap.top().first;
        u = heap.top().second;
        heap.pop();
        if (dist[u] != -1) continue;
        dist[u] = d;
        ++settled;
        for (auto [v, w] : adj[u]) {
            if (dist[v] == -1) heap.push({d + w, v});
        }
    }
    for (int v = 0; v < n; ++v) cout << dist[v] << (v + 1 < n ? " " : "\n");
    return 0;
}

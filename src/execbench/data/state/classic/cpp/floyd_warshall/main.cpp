#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    const long long INF = 1000000000;
    vector<vector<long long>> dist(n, vector<long long>(n, INF));
    for (int v = 0; v < n; ++v) dist[v][v] = 0;
    for (int e = 0; e < m; ++e) {
        int u, v;
        long long w;
        cin >> u >> v >> w;
        dist[u][v] = min(dist[u][v], w);
    }
    int k = 0;
    long long updates = 0;
    for (k = 0; k < n; ++k) {
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                if (dist[i][k] + dist[k][j] < dist[i][j]) {
                    dist[i][j] = dist[i][k] + dist[k][j];
                    ++updates;
                }
    }
    long long total = 0;
    for (const auto& row : dist)
        for (long long d : row)
            if (d < INF) total += d;
    cout << total << " " << updates << "\n";
    return 0;
}

#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    const long long INF = 1000000000;
    vector<vector<long long>> weight(n, vector<long long>(n, INF));
    for (int k = 0; k < m; ++k) {
        int a, b;
        long long w;
        cin >> a >> b >> w;
        weight[a][b] = min(weight[a][b], w);
        weight[b][a] = min(weight[b][a], w);
    }
    vector<long long> dist(n, INF);
    vector<bool> done(n, false);
    dist[0] = 0;
    int settled = 0;
    for (int round = 0; round < n; ++round) {
        int u = -1;
        for (int v = 0; v < n; ++v) {
            if (!done[v] && (u < 0 || dist[v] < dist[u])) {
                u = v;
            }
        }
        if (dist[u] == INF) {
            break;
        }
        done[u] = true;
        settled += 1;
        for (int v = 0; v < n; ++v) {
            if (weight[u][v] < INF && dist[u] + weight[u][v] < dist[v]) {
                dist[v] = dist[u] + weight[u][v];
            }
        }
    }
    long long total = 0;
    for (long long d : dist) {
        total += d;
    }
    cout << settled << " " << total << " " << *max_element(dist.begin(), dist.end()) << "\n";
    return 0;
}

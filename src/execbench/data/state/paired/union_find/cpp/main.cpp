#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    vector<int> parent(n), size(n, 1);
    for (int i = 0; i < n; ++i) {
        parent[i] = i;
    }
    int components = n;
    int merges = 0;
    for (int k = 0; k < m; ++k) {
        int a, b, w;
        cin >> a >> b >> w;
        while (parent[a] != a) {
            parent[a] = parent[parent[a]];
            a = parent[a];
        }
        while (parent[b] != b) {
            parent[b] = parent[parent[b]];
            b = parent[b];
        }
        if (a == b) {
            continue;
        }
        if (size[a] < size[b]) {
            swap(a, b);
        }
        parent[b] = a;
        size[a] += size[b];
        components -= 1;
        merges += 1;
    }
    cout << components << " " << merges << " " << *max_element(size.begin(), size.end()) << "\n";
    return 0;
}

#include <iostream>
#include <utility>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<vector<int>> pegs(3);
    for (int d = n; d >= 1; --d) {
        pegs[0].push_back(d);
    }
    long long moves = 0;
    long long total = (1LL << n) - 1;
    vector<pair<int, int>> order;
    if (n % 2 == 0) {
        order = {{0, 1}, {0, 2}, {1, 2}};
    } else {
        order = {{0, 2}, {0, 1}, {1, 2}};
    }
    while (moves < total) {
        int a = order[moves % 3].first;
        int b = order[moves % 3].second;
        if (!pegs[b].empty() && (pegs[a].empty() || pegs[b].back() < pegs[a].back())) {
            swap(a, b);
        }
        pegs[b].push_back(pegs[a].back());
        pegs[a].pop_back();
        moves += 1;
    }
    cout << moves << " " << pegs[0].size() << " " << pegs[1].size() << " " << pegs[2].size() << "\n";
    return 0;
}

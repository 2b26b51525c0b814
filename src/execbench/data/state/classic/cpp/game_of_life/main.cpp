#include <iostream>
#include <string>
#include <vector>
using namespace std;

int main() {
    int generations;
    cin >> generations;
    vector<string> grid;
    string row;
    while (cin >> row) grid.push_back(row);
    int rows = grid.size(), cols = grid[0].size();
    int alive = 0;
    for (const auto& line : grid)
        for (char ch : line) alive += ch == '#';
    int gen = 0;
    for (gen = 0; gen < generations; ++gen) {
        vector<string> next(rows, string(cols, '.'));
        for (int r = 0; r < rows; ++r) {
            for (int c = 0; c < cols; ++c) {
                int n = 0;
                for (int dr = -1; dr <= 1; ++dr)
                    for (int dc = -1; dc <= 1; ++dc)
                        if ((dr || dc) && grid[(r + dr + rows) % rows][(c + dc + cols) % cols] == '#') ++n;
                if (n == 3 || (n == 2 && grid[r][c] == '#')) next[r][c] = '#';
            }
        }
        grid = next;
        alive = 0;
        for (const auto& line : grid)
            for (char ch : line) alive += ch == '#';
    }
    cout << alive << "\n";
    for (const auto& line : grid) cout << line << "\n";
    return 0;
}

#include <iostream>
#include <string>
#include <vector>
using namespace std;

int main() {
    int rows, cols;
    cin >> rows >> cols;
    vector<string> cells(rows);
    for (int r = 0; r < rows; ++r) {
        cin >> cells[r];
    }
    const long long MOD = 1000000007;
    vector<vector<long long>> ways(rows, vector<long long>(cols, 0));
    ways[0][0] = 1;
    int blocked = 0;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            if (cells[r][c] == '#') {
                ways[r][c] = 0;
                blocked += 1;
                continue;
            }
            if (r > 0) {
                ways[r][c] = (ways[r][c] + ways[r - 1][c]) % MOD;
            }
            if (c > 0) {
                ways[r][c] = (ways[r][c] + ways[r][c - 1]) % MOD;
            }
        }
    }
    cout << ways[rows - 1][cols - 1] << " " << blocked << "\n";
    return 0;
}

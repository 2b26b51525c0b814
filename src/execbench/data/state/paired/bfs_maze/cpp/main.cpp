#include <deque>
#include <iostream>
#include <string>
#include <utility>
#include <vector>
using namespace std;

int main() {
    int rows, cols;
    cin >> rows >> cols;
    vector<string> cells(rows);
    for (int r = 0; r < rows; ++r) {
        cin >> cells[r];
    }
    vector<vector<int>> dist(rows, vector<int>(cols, -1));
    dist[0][0] = 0;
    deque<pair<int, int>> queue;
    queue.push_back({0, 0});
    int expanded = 0;
    int answer = -1;
    int dr[4] = {1, 0, -1, 0};
    int dc[4] = {0, 1, 0, -1};
    while (!queue.empty()) {
        int r = queue.front().first;
        int c = queue.front().second;
        queue.pop_front();
        expanded += 1;
        if (r == rows - 1 && c == cols - 1) {
            answer = dist[r][c];
            break;
        }
        for (int d = 0; d < 4; ++d) {
            int nr = r + dr[d];
            int nc = c + dc[d];
            if (0 <= nr && nr < rows && 0 <= nc && nc < cols && cells[nr][nc] == '.' && dist[nr][nc] < 0) {
                dist[nr][nc] = dist[r][c] + 1;
                queue.push_back({nr, nc});
            }
        }
    }
    cout << answer << " " << expanded << "\n";
    return 0;
}

#include <algorithm>
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
    int islands = 0;
    int largest = 0;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            if (cells[r][c] != '#') {
                continue;
            }
            islands += 1;
            int size = 0;
            vector<pair<int, int>> stack = {{r, c}};
            cells[r][c] = 'x';
            while (!stack.empty()) {
                int y = stack.back().first;
                int x = stack.back().second;
                stack.pop_back();
                size += 1;
                int ys[4] = {y + 1, y - 1, y, y};
                int xs[4] = {x, x, x + 1, x - 1};
                for (int d = 0; d < 4; ++d) {
                    int ny = ys[d];
                    int nx = xs[d];
                    if (0 <= ny && ny < rows && 0 <= nx && nx < cols && cells[ny][nx] == '#') {
                        cells[ny][nx] = 'x';
                        stack.push_back({ny, nx});
                    }
                }
            }
            largest = max(largest, size);
        }
    }
    cout << islands << " " << largest << "\n";
    return 0;
}

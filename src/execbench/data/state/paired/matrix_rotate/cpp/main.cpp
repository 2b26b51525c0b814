#include <iostream>
#include <vector>
using namespace std;

int main() {
    int times;
    cin >> times;
    const int n = 6;
    vector<vector<int>> matrix(n, vector<int>(n));
    for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
            matrix[r][c] = r * n + c;
        }
    }
    int rotations = 0;
    for (int t = 0; t < times; ++t) {
        vector<vector<int>> rotated(n, vector<int>(n, 0));
        for (int r = 0; r < n; ++r) {
            for (int c = 0; c < n; ++c) {
                rotated[c][n - 1 - r] = matrix[r][c];
            }
        }
        matrix = rotated;
        rotations += 1;
        if (t % 3 == 2) {
            matrix[0][0] += 1;
        }
    }
    cout << rotations << "\n";
    for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
            cout << matrix[r][c] << (c + 1 < n ? " " : "\n");
        }
    }
    return 0;
}

#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<vector<int>> grid(n, vector<int>(n));
    for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
            grid[r][c] = (r * 7 + c * 3) % 10;
        }
    }
    int top = 0, bottom = n - 1, left = 0, right = n - 1;
    int visited = 0;
    long long checksum = 0;
    while (top <= bottom && left <= right) {
        for (int c = left; c <= right; ++c) {
            visited += 1;
            checksum = (checksum * 3 + grid[top][c]) % 1000003;
        }
        top += 1;
        for (int r = top; r <= bottom; ++r) {
            visited += 1;
            checksum = (checksum * 3 + grid[r][right]) % 1000003;
        }
        right -= 1;
        if (top <= bottom) {
            for (int c = right; c >= left; --c) {
                visited += 1;
                checksum = (checksum * 3 + grid[bottom][c]) % 1000003;
            }
            bottom -= 1;
        }
        if (left <= right) {
            for (int r = bottom; r >= top; --r) {
                visited += 1;
                checksum = (checksum * 3 + grid[r][left]) % 1000003;
            }
            left += 1;
        }
    }
    cout << visited << " " << checksum << "\n";
    return 0;
}

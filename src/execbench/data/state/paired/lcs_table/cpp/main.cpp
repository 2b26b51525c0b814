#include <algorithm>
#include <iostream>
#include <string>
#include <vector>
using namespace std;

int main() {
    string a, b;
    cin >> a >> b;
    int rows = a.size() + 1;
    int cols = b.size() + 1;
    vector<vector<int>> table(rows, vector<int>(cols, 0));
    for (int i = 1; i < rows; ++i) {
        for (int j = 1; j < cols; ++j) {
            if (a[i - 1] == b[j - 1]) {
                table[i][j] = table[i - 1][j - 1] + 1;
            } else {
                table[i][j] = max(table[i - 1][j], table[i][j - 1]);
            }
        }
    }
    int i = rows - 1;
    int j = cols - 1;
    string common;
    while (i > 0 && j > 0) {
        if (a[i - 1] == b[j - 1]) {
            common += a[i - 1];
            i -= 1;
            j -= 1;
        } else if (table[i - 1][j] >= table[i][j - 1]) {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    reverse(common.begin(), common.end());
    cout << table[rows - 1][cols - 1] << "\n";
    cout << common << "\n";
    return 0;
}

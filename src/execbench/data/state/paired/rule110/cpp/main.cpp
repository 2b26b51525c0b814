#include <iostream>
#include <vector>
using namespace std;

int main() {
    int steps;
    cin >> steps;
    const int width = 40;
    vector<int> cells(width, 0);
    cells[width - 1] = 1;
    const int rule = 110;
    int births = 0;
    for (int step = 0; step < steps; ++step) {
        vector<int> nxt(width, 0);
        for (int i = 0; i < width; ++i) {
            int left = i > 0 ? cells[i - 1] : 0;
            int right = i + 1 < width ? cells[i + 1] : 0;
            int pattern = left * 4 + cells[i] * 2 + right;
            nxt[i] = (rule >> pattern) & 1;
            if (nxt[i] == 1 && cells[i] == 0) {
                births += 1;
            }
        }
        cells = nxt;
    }
    int alive = 0;
    for (int i = 0; i < width; ++i) {
        cout << (cells[i] ? '#' : '.');
        alive += cells[i];
    }
    cout << "\n" << alive << " " << births << "\n";
    return 0;
}

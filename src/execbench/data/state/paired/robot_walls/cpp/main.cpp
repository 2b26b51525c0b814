#include <iostream>
#include <set>
#include <string>
#include <utility>
using namespace std;

struct Robot {
    int x;
    int y;
    int bumps;
};

int main() {
    int n;
    string moves;
    cin >> n >> moves;
    const int size = 12;
    Robot robot{0, 0, 0};
    set<pair<int, int>> visited = {{0, 0}};
    int step = 0;
    char move = ' ';
    int nx = 0;
    int ny = 0;
    for (step = 0; step < n; ++step) {
        move = moves[step];
        nx = robot.x + (move == 'R' ? 1 : move == 'L' ? -1 : 0);
        ny = robot.y + (move == 'D' ? 1 : move == 'U' ? -1 : 0);
        if (nx < 0 || ny < 0 || nx >= size || ny >= size || (nx * 3 + ny * 5) % 11 == 0) {
            robot.bumps += 1;
            continue;
        }
        robot.x = nx;
        robot.y = ny;
        visited.insert({nx, ny});
    }
    cout << robot.x << " " << robot.y << " " << robot.bumps << " " << visited.size() << "\n";
    return 0;
}

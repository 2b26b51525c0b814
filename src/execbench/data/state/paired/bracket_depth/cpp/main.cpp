#include <algorithm>
#include <iostream>
#include <string>
using namespace std;

int main() {
    string text;
    cin >> text;
    int depth = 0;
    int max_depth = 0;
    int position = 0;
    int error = -1;
    int pairs = 0;
    while (position < (int)text.size()) {
        char ch = text[position];
        if (ch == '(') {
            depth += 1;
            max_depth = max(max_depth, depth);
        } else {
            depth -= 1;
            pairs += 1;
            if (depth < 0) {
                error = position;
                break;
            }
        }
        position += 1;
    }
    cout << max_depth << " " << pairs << " " << error << " " << depth << "\n";
    return 0;
}

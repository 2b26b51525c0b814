#include <algorithm>
#include <iostream>
#include <string>
using namespace std;

int main() {
    string text;
    cin >> text;
    string encoded;
    int pieces = 0;
    char run_char = text[0];
    int run_len = 0;
    int longest = 0;
    for (char ch : text) {
        if (ch == run_char) {
            run_len += 1;
        } else {
            encoded += to_string(run_len) + run_char;
            pieces += 1;
            run_char = ch;
            run_len = 1;
        }
        longest = max(longest, run_len);
    }
    encoded += to_string(run_len) + run_char;
    pieces += 1;
    cout << pieces << " " << longest << "\n";
    cout << encoded.substr(0, 60) << "\n";
    return 0;
}

#include <iostream>
#include <string>
using namespace std;

int main() {
    string text;
    cin >> text;
    int n = text.size();
    long long count = 0;
    int longest = 1;
    for (int center = 0; center < 2 * n - 1; ++center) {
        int left = center / 2;
        int right = left + center % 2;
        while (left >= 0 && right < n && text[left] == text[right]) {
            count += 1;
            if (right - left + 1 > longest) {
                longest = right - left + 1;
            }
            left -= 1;
            right += 1;
        }
    }
    cout << count << " " << longest << "\n";
    return 0;
}

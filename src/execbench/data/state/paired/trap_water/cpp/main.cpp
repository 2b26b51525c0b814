#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> heights(n);
    for (int i = 0; i < n; ++i) {
        int x;
        cin >> x;
        heights[i] = x % 50;
    }
    int left = 0;
    int right = n - 1;
    int left_max = 0;
    int right_max = 0;
    long long water = 0;
    while (left < right) {
        if (heights[left] < heights[right]) {
            if (heights[left] >= left_max) {
                left_max = heights[left];
            } else {
                water += left_max - heights[left];
            }
            left += 1;
        } else {
            if (heights[right] >= right_max) {
                right_max = heights[right];
            } else {
                water += right_max - heights[right];
            }
            right -= 1;
        }
    }
    cout << water << " " << left << "\n";
    return 0;
}

#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> prices(n);
    for (int i = 0; i < n; ++i) {
        cin >> prices[i];
    }
    int low_day = 0;
    int best = 0;
    int buy = 0;
    int sell = 0;
    for (int day = 1; day < n; ++day) {
        if (prices[day] < prices[low_day]) {
            low_day = day;
        } else if (prices[day] - prices[low_day] > best) {
            best = prices[day] - prices[low_day];
            buy = low_day;
            sell = day;
        }
    }
    cout << best << " " << buy << " " << sell << "\n";
    return 0;
}

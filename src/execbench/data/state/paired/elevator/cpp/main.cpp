#include <iostream>
#include <vector>
using namespace std;

struct Elevator {
    int floor;
    int travelled;
    int stops;
};

int main() {
    int n;
    cin >> n;
    vector<int> requests(n);
    for (int i = 0; i < n; ++i) {
        int x;
        cin >> x;
        requests[i] = x % 20;
    }
    Elevator lift{0, 0, 0};
    int target = 0;
    int step = 0;
    for (size_t k = 0; k < requests.size(); ++k) {
        target = requests[k];
        if (target == lift.floor) {
            continue;
        }
        step = target > lift.floor ? 1 : -1;
        while (lift.floor != target) {
            lift.floor += step;
            lift.travelled += 1;
        }
        lift.stops += 1;
    }
    cout << lift.floor << " " << lift.travelled << " " << lift.stops << "\n";
    return 0;
}

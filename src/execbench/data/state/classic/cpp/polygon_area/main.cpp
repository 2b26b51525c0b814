#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<long long> xs(n), ys(n);
    for (int k = 0; k < n; ++k) cin >> xs[k] >> ys[k];
    long long twice_area = 0;
    double perimeter = 0.0;
    int i = 0;
    for (i = 0; i < n; ++i) {
        int j = (i + 1) % n;
        twice_area += xs[i] * ys[j] - xs[j] * ys[i];
        perimeter += hypot(double(xs[j] - xs[i]), double(ys[j] - ys[i]));
    }
    printf("%.1f %.6f\n", llabs(twice_area) / 2.0, perimeter);
    return 0;
}

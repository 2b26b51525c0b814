#include <cstdio>
#include <iostream>
#include <vector>
using namespace std;

vector<double> coeffs;

double f(double x) {
    double result = 0.0;
    for (double c : coeffs) result = result * x + c;
    return result;
}

int main() {
    double a, b;
    int n;
    cin >> a >> b >> n;
    double c;
    while (cin >> c) coeffs.push_back(c);
    double h = (b - a) / n;
    double total = f(a) + f(b);
    int i = 1, weight = 0;
    for (i = 1; i < n; ++i) {
        weight = i % 2 ? 4 : 2;
        total += weight * f(a + i * h);
    }
    printf("%.9f\n", total * h / 3);
    return 0;
}

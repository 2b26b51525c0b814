class Employee:
    def __init__(self, name, base):
        self.name = name
        self.base = base
        self.manager = None

    def pay(self):
        return self.base

    def title(self):
        return "Employee"

    def chain(self):
        names = [self.name]
        boss = self.manager
        while boss is not None:
            names.append(boss.name)
            boss = boss.manager
        return names


class Intern(Employee):
    def pay(self):
        return self.base * 160

    def title(self):
        return "Intern"


class Manager(Employee):
    def __init__(self, name, base):
        super().__init__(name, base)
        self.reports = []

    def add_report(self, employee):
        employee.manager = self
        self.reports.append(employee)

    def pay(self):
        return super().pay() + 100 * len(self.reports)

    def title(self):
        return "Manager"


class Director(Manager):
    def pay(self):
        return super().pay() * 2

    def title(self):
        return "Director of " + str(len(self.reports))


ROLES = {"staff": Employee, "intern": Intern, "manager": Manager, "director": Director}


def main(people):
    staff = [ROLES[role](name, base) for role, name, base in people]
    bosses = [e for e in staff if isinstance(e, Manager)]
    for i, e in enumerate(staff):
        if bosses and e is not bosses[0]:
            boss = bosses[0] if isinstance(e, Manager) else bosses[i % len(bosses)]
            if boss is not e:
                boss.add_report(e)
    total = sum(e.pay() for e in staff)
    return total, staff[-1].title(), staff[-1].chain()

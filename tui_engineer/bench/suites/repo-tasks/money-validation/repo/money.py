from dataclasses import dataclass


@dataclass(frozen=True)
class Money:
    amount: int  # cents
    currency: str

    def __add__(self, other):
        return Money(self.amount + other.amount, self.currency)

#include <stdio.h>
int main(void){puts("debitd: not yet");return 0;}

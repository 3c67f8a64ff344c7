/* array: the element count of a fixed array, for tables of names and their enums: a loop
 * bound written as ARRAY_SIZE(names) cannot fall out of step with the table. */
#ifndef DEBIT_ARRAY_H
#define DEBIT_ARRAY_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif

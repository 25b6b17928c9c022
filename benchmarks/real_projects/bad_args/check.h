#pragma once
bool size_ok(int n);

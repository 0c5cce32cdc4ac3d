import { PasswordInput, Stack } from '@mantine/core';

/** A new password typed twice; the server judges its strength (weak_password explains why). */
export function NewPassword({
  value,
  confirm,
  onChange,
  onConfirm,
  label = 'New password',
}: {
  value: string;
  confirm: string;
  onChange: (v: string) => void;
  onConfirm: (v: string) => void;
  label?: string;
}) {
  const mismatch = confirm.length > 0 && confirm !== value;
  return (
    <Stack gap="sm">
      <PasswordInput
        label={label}
        description="At least 8 characters; a phrase of a few unrelated words works well."
        autoComplete="new-password"
        required
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
      />
      <PasswordInput
        label="Repeat it"
        autoComplete="new-password"
        required
        value={confirm}
        onChange={(e) => onConfirm(e.currentTarget.value)}
        error={mismatch ? 'The two passwords differ.' : undefined}
      />
    </Stack>
  );
}

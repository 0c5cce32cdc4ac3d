// What a form's refusal says that belongs to no field, at the top of the form (useFieldErrors puts the rest beside
// the fields).
import { Alert } from '@mantine/core';

export function FormError({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <Alert color="red" role="alert" data-testid="form-error">
      {text}
    </Alert>
  );
}
